"""The neutral core every stage shares: settings, errors, pipeline records, the one tokenizer (`text`), the one
URL key (`urls`) and the one byte→text decoder (`decode`). It imports nothing from `ingest`, `index`,
`assistant` or `ui` (tests/test_architecture.py checks), so any stage may import it without creating a cycle."""
