"""Shared test support: real local servers and fakes used by unit and integration tests."""
