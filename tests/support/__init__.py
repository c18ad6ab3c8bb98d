"""Test-only helpers (local servers, fixtures) shared by the utcgen test suite."""
