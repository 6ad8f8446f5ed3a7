"""Checks that run before any reader sees an upload: DOCX archives and PDFs
judged by what they inflate to (one inflation rule), refused with a precise error."""
