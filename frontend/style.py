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
.cl-hit { border-left: 4px solid #2563eb; }
.cl-neighbor { border-left: 4px solid #9ca3af; }
.cl-headings { font-size: 0.8em; opacity: 0.75; }
.cl-content { white-space: pre-wrap; word-break: break-word; margin: 4px 0 0; font-size: 0.85em; max-height: 16em; overflow: auto; }

.cl-node { border: 1px solid var(--border-color-primary); border-radius: 8px; padding: 6px 8px; margin: 10px 0; }
.cl-group { margin-left: 1.5em; padding-left: 8px; border-left: 2px dashed var(--border-color-primary); }
.cl-group-caption { font-size: 0.8em; opacity: 0.75; }
.cl-nested { list-style: none; padding: 0; margin: 0; }
.cl-empty { opacity: 0.7; font-style: italic; }

.cl-message { padding: 4px 0; }
.cl-message-ok { color: #15803d; }
.cl-message-error { color: #b91c1c; }
.cl-failed { color: #b91c1c; }
.cl-health td, .cl-health th { padding: 2px 10px; text-align: left; }
.cl-status-serving { color: #15803d; font-weight: 600; }
.cl-status-unreachable, .cl-status-not_serving { color: #b91c1c; font-weight: 600; }
"""
