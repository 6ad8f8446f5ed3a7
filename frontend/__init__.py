"""ChunkLab's Gradio front end: `python -m frontend`.

It reaches the four services only through the client library (`chunklab.client`),
renders what they return (`formatting`, `retrieval_html`, `knobs`) and wires
one page per module under `pages/`.
"""
