"""ChunkLab's Gradio front end: `python -m frontend`.

It reaches the four services only through the client library (`chunklab.client`),
and is laid out in rooms: `app.py` composes the tabs, each tab a package under
`pages/` (its logic, layout and wiring), with the rendering several tabs share in
`views/`, the form builders they share in `forms/`, and the error lines every page
and form writes in `errors.py`. Templates are in `templates/`, the CSS in `style.py`,
the report and export files the UI serves in `report_files.py`.
"""
