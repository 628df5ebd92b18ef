"""Ingest stage: the tiered-list catalog, the crawler, extraction and chunking."""
