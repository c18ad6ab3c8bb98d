"""One importer per source format. Each reshapes parsed items into `Candidate`s in native
shape and says what it could not reshape (problems) or had to change (warnings); none
validates (utcgen.pipeline.ingest.checks does, the same way for every format)."""
