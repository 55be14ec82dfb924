"""Pydantic models of the CRDs (spec, status, inventory) and CRD generation."""
