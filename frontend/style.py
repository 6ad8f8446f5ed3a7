"""The CSS for ChunkLab's own markup (retrieval results, statuses, health).

Kept as a Python string rather than a .css file so that it ships with any
install of the package (a plain `pip install` leaves non-Python files out).
Gradio's theme variables keep it readable in light and dark mode.
"""

CSS = """
.cl-flat-list, .cl-tree-hits { list-style: none; padding: 0; margin: 0; }
.cl-chunk { border: 1px solid var(--border-color-primary); border-radius: 6px; padding: 6px 8px; margin: 6px 0; }
.cl-chunk-head { font-size: 0.85em; display: flex; flex-wrap: wrap; gap: 4px 6px; align-items: center; }
.cl-badge { font-weight: 600; border-radius: 4px; padding: 0 6px; color: #fff; }
.cl-badge-hit { background: #2563eb; }
.cl-badge-neighbor { background: #6b7280; }
.cl-badge-window { background: #0d9488; }
.cl-badge-parent { background: #9333ea; }
.cl-letter { display: inline-block; min-width: 1.4em; text-align: center; font-weight: 700; border-radius: 4px; background: #1f2937; color: #fff; margin-right: 4px; }
.cl-hit { border-left: 4px solid #2563eb; }
.cl-neighbor { border-left: 4px solid #9ca3af; }
.cl-window { border-left: 4px solid #0d9488; }
.cl-chunk.cl-parent { border-left: 4px solid #9333ea; }
.cl-headings { font-size: 0.8em; opacity: 0.75; }
.cl-content { white-space: pre-wrap; word-break: break-word; margin: 4px 0 0; font-size: 0.85em; max-height: 16em; overflow: auto; }

.cl-node { border: 1px solid var(--border-color-primary); border-radius: 8px; padding: 6px 8px; margin: 10px 0; }
.cl-group { margin-left: 1.5em; padding-left: 8px; border-left: 2px dashed var(--border-color-primary); }
.cl-group-caption { font-size: 0.8em; opacity: 0.75; }
.cl-nested { list-style: none; padding: 0; margin: 0; }
.cl-empty { opacity: 0.7; font-style: italic; }

.cl-message { padding: 4px 0; }
/* A form's notes under its fields (frontend/forms/field_notes.py): they stay until the value is fixed. */
.cl-field-notes { list-style: none; padding: 0; margin: 4px 0; }
.cl-field-note { padding: 4px 8px; margin: 2px 0; border-left: 4px solid; border-radius: 2px; }
.cl-field-error { border-color: #b91c1c; color: #b91c1c; background: rgba(185, 28, 28, 0.08); }
.cl-field-warning { border-color: #dd6b20; background: rgba(221, 107, 32, 0.12); }
.cl-message-ok { color: #15803d; }
.cl-message-error { color: #b91c1c; }
.cl-message-warning { color: #b45309; }
.cl-failed { color: #b91c1c; }
.cl-excerpt { white-space: pre-wrap; margin: 6px 0; padding-left: 8px; border-left: 3px solid var(--border-color-primary); }
.cl-status-serving { color: #15803d; font-weight: 600; }
.cl-status-unreachable, .cl-status-not_serving { color: #b91c1c; font-weight: 600; }

.cl-muted { opacity: 0.7; font-size: 0.9em; margin-left: 6px; }
.cl-table { border-collapse: collapse; margin: 6px 0; font-size: 0.9em; }
.cl-table th, .cl-table td { border: 1px solid var(--border-color-primary); padding: 3px 8px; text-align: left; vertical-align: top; }
.cl-n { text-align: right; font-variant-numeric: tabular-nums; }
/* Table headings wrap between words, never inside one ("collectio/n"). */
#documents-table thead th, #documents-table thead th * { word-break: normal; overflow-wrap: normal; hyphens: none; }
#documents-table { overflow-x: auto; }
.cl-documents tbody tr { cursor: pointer; }
.cl-documents tbody tr:hover { background: var(--background-fill-secondary); }
.cl-note { font-style: italic; opacity: 0.8; }

.cl-answer { border: 1px solid var(--border-color-primary); border-radius: 8px; padding: 8px 10px; }
.cl-answer-head { margin-bottom: 4px; }
.cl-answer-text { white-space: pre-wrap; word-break: break-word; }
.cl-answer-facts { font-size: 0.8em; opacity: 0.7; margin-top: 4px; }
.cl-badge-extractive { background: #b45309; }
.cl-badge-llm { background: #15803d; }
.cl-badge-pending { background: #6b7280; }
.cl-badge-failed { background: #b91c1c; }

.cl-boundary-text { white-space: pre-wrap; word-break: break-word; font-size: 0.9em; line-height: 1.6; }
.cl-seg-0 { background: rgba(37, 99, 235, 0.14); }
.cl-seg-1 { background: rgba(234, 179, 8, 0.22); }
.cl-overlap { background: rgba(220, 38, 38, 0.25); text-decoration: underline dotted; }
.cl-gap { opacity: 0.55; }
.cl-bmark { font-size: 0.7em; font-weight: 600; color: #fff; background: #374151; border-radius: 3px; padding: 0 3px; margin: 0 2px; vertical-align: super; white-space: nowrap; }
.cl-bpage { display: block; font-size: 0.75em; color: #6b7280; border-top: 1px dashed #9ca3af; margin: 4px 0; white-space: nowrap; }
.cl-bparent { border: 2px solid #9333ea; border-radius: 8px; padding: 4px 8px; margin: 8px 0; }
.cl-bparent-head { font-size: 0.8em; font-weight: 600; color: #9333ea; }
.cl-sbs-scroll { max-height: 75vh; overflow-y: auto; border: 1px solid var(--border-color-primary); border-radius: 6px; }
.cl-sbs-head, .cl-sbs-row { display: grid; grid-template-columns: 1fr 1fr; column-gap: 12px; }
.cl-sbs-head { position: sticky; top: 0; z-index: 1; background: var(--background-fill-primary); font-weight: 600; font-size: 0.85em; padding: 4px 6px; border-bottom: 1px solid var(--border-color-primary); }
.cl-sbs-block { content-visibility: auto; contain-intrinsic-size: auto 1200px; }
.cl-sbs-cell { white-space: pre-wrap; word-break: break-word; font-size: 0.9em; line-height: 1.6; padding: 0 6px; border-top: 2px solid transparent; }
.cl-sbs-cut { border-top-color: #374151; }
.cl-sbs-inparent { box-shadow: inset 3px 0 0 #9333ea; }
.cl-sbs-parent { display: block; font-size: 0.75em; font-weight: 600; color: #9333ea; }
.cl-sbs-stats { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; font-size: 0.9em; }
.cl-sbs-label { font-weight: 600; }

.cl-nbadge, .cl-mbadge { display: inline-block; border: 1px solid #2563eb; color: #2563eb; border-radius: 10px; padding: 0 7px; font-size: 0.8em; margin: 0 3px; white-space: nowrap; }
.cl-nbadge-muted { border-color: #9ca3af; color: #9ca3af; }
.cl-mbadge { border-color: #0d9488; color: #0d9488; }
.cl-state-succeeded { color: #15803d; font-weight: 600; }
.cl-state-failed, .cl-state-interrupted { color: #b91c1c; font-weight: 600; }
.cl-state-running, .cl-state-pending { color: #b45309; font-weight: 600; }
.cl-state-partial { color: #78350f; background: #fcd34d; border-radius: 4px; padding: 0 6px; font-weight: 600; }
.cl-run-failure { color: #78350f; background: rgba(245, 158, 11, 0.18); border-left: 3px solid #f59e0b; padding: 2px 6px; margin-top: 2px; white-space: normal; }
.cl-estimate, .cl-experiment { border: 1px solid var(--border-color-primary); border-radius: 8px; padding: 8px 10px; margin: 6px 0; }
.cl-detail-columns { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; }

.cl-warnings { border-left: 5px solid #dd6b20; background: rgba(221, 107, 32, 0.12); padding: 8px 12px; margin: 8px 0; font-size: 1.05em; }
.cl-parse-report { border: 1px solid var(--border-color-primary); border-radius: 8px; padding: 6px 10px; margin: 6px 0; }
.cl-parse-counts { list-style: none; padding: 0; margin: 4px 0; display: flex; flex-wrap: wrap; gap: 4px 16px; }
.cl-parse-clean { color: #15803d; }
.cl-warnings-none { border-left-color: #15803d; background: rgba(21, 128, 61, 0.08); }

.cl-report-head { font-size: 0.9em; margin: 4px 0; }
.cl-report { width: 100%; height: 80vh; border: 1px solid var(--border-color-primary); border-radius: 8px; background: #fff; }
.cl-sweep { margin: 6px 0; }
.cl-scroll { overflow-x: auto; max-width: 100%; }
/* A run key (strategy[knob=…,…]) may break anywhere, so the run table keeps every measure column in view. */
.cl-runs-table code { overflow-wrap: anywhere; }
/* …but never narrower than a strategy's name, or the key stands as a column of letters. */
.cl-runs-table td:first-child { min-width: 10em; }
details.cl-metric { margin: 8px 0; }
details.cl-metric > summary { cursor: pointer; }
#query-columns, .cl-columns { min-width: 0; max-width: 100%; }
.cl-column-missing { margin: 4px 0; padding: 4px 8px; border-left: 4px solid #f59e0b; font-size: 0.85em; }
.cl-missing-list { margin: 2px 0 4px 16px; padding: 0; }
.cl-process-missing { padding: 2px 10px; border-radius: 6px; border: 1px solid #b45309; cursor: pointer; background: var(--background-fill-primary); }
mark.cl-hit-span { background: #bfdbfe; color: inherit; border-radius: 2px; }
.cl-hit-rank { font-size: 0.75em; font-weight: bold; color: #1d4ed8; vertical-align: super; }
.cl-columns-row { display: grid; grid-auto-flow: column; grid-auto-columns: minmax(260px, 1fr); gap: 12px; overflow-x: auto; }
.cl-column { border: 1px solid var(--border-color-primary); border-radius: 8px; padding: 6px 8px; min-width: 0; }
.cl-column-title { margin: 2px 0 4px; font-size: 0.95em; word-break: break-word; }
.cl-column-facts, .cl-column-measures { font-size: 0.85em; margin: 2px 0; }
.cl-column-tree > summary { cursor: pointer; font-size: 0.85em; }
mark.cl-ref { background: #fde68a; color: inherit; border-radius: 2px; }
.cl-passage { border: 1px solid var(--border-color-primary); border-radius: 6px; padding: 6px 8px; margin: 6px 0; }
.cl-passage-note, .cl-column-caption, .cl-column-note { font-size: 0.85em; opacity: 0.8; margin: 4px 0; }
.cl-passage-chunks { list-style: none; padding: 0; margin: 4px 0; }
.cl-passage-chunks > .cl-chunk { margin: 2px 0; padding: 2px 6px; }
.cl-column-answer { margin: 6px 0; padding: 6px 8px; border-radius: 6px; background: var(--background-fill-secondary); }
.cl-citations { font-size: 0.85em; margin: 4px 0 0; padding-left: 1.4em; }
.cl-cite { font-weight: 600; }

/* A document's text to select a question's passage in (Question sets, written by hand). */
.cl-hand-text { white-space: pre-wrap; word-break: break-word; font-size: 0.9em; line-height: 1.6; max-height: 26em; overflow: auto; border: 1px solid var(--border-color-primary); border-radius: 6px; padding: 6px 10px; }
.cl-hand-mark { background: rgba(22, 163, 74, 0.25); }

/* Start here: four steps, the next one marked. */
.cl-steps { list-style: none; padding: 0; margin: 0; display: grid; grid-template-columns: repeat(4, minmax(0, 1fr)); gap: 10px; }
.cl-step { border: 1px solid var(--border-color-primary); border-radius: 8px; padding: 8px 10px; }
.cl-step-done { border-left: 5px solid #15803d; }
.cl-step-next { border: 2px solid #2563eb; border-left: 5px solid #2563eb; }
.cl-step-todo { opacity: 0.75; }
.cl-step-state { font-size: 0.8em; font-weight: 600; text-transform: uppercase; }
.cl-step-done .cl-step-state { color: #15803d; }
.cl-step-next .cl-step-state { color: #2563eb; }
.cl-step-detail { font-size: 0.9em; margin-top: 4px; word-break: break-word; }
"""
