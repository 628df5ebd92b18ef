"""The neutral core every stage shares: settings, errors, pipeline records (and, as they land, text
and URL helpers). It imports nothing from `ingest`, `index`, `assistant` or `ui`, so any stage may
import it without creating a cycle."""
