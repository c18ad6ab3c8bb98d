import sys

from utcgen.pipeline.cli import main

sys.exit(main())
