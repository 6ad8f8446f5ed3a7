"""The expansion tree (chunklab/views/retrieval_view.py, ADR 0084): hits that share a parent
are one node, the parent shown once with each hit marked at its own characters; a lone
parent-child hit is marked inside its parent, a sentence-window hit inside its window; a
reference excerpt stays marked inside a hit's mark."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from chunklab.metrics import Span
from chunklab.v1 import common_pb2
from chunklab.views import retrieval_view
from chunklab.views.render import render_macro

TEXT = "Lamps burned oil. Fog horns warned ships. Flags showed cones. Radio came later."
HIT, PARENT, WINDOW = common_pb2.CHUNK_LABEL_HIT, common_pb2.CHUNK_LABEL_PARENT, common_pb2.CHUNK_LABEL_WINDOW


def item(label: int, start: int, end: int, index: int, rank: int = 0, role=common_pb2.CHUNK_ROLE_CHILD):
    chunk = common_pb2.Chunk(
        chunk_id=f"d/{role}/{index}",
        document_id="d",
        chunk_index=index,
        start_char=start,
        end_char=end,
        content=TEXT[start:end],
        role=role,
    )
    return common_pb2.RetrievedChunk(chunk=chunk, label=label, rank=rank)


def sentence(n: int) -> tuple[int, int]:
    starts = [0, 18, 42, 62]
    ends = [17, 41, 61, len(TEXT)]
    return starts[n], ends[n]


PARENT_ALL = item(PARENT, 0, len(TEXT), 0, role=common_pb2.CHUNK_ROLE_PARENT)


def tree_html(nodes) -> ET.Element:
    return ET.fromstring(render_macro("frontend", "retrieval.html.j2", "expansion_tree", nodes))


def test_hits_sharing_a_parent_show_it_once_with_each_hit_marked_inside_it():
    tree = common_pb2.ExpansionTree(
        hits=[
            common_pb2.ExpansionNode(hit=item(HIT, *sentence(1), 1, rank=1), parent=PARENT_ALL),
            common_pb2.ExpansionNode(hit=item(HIT, *sentence(3), 3, rank=2), parent=PARENT_ALL),
        ]
    )
    nodes = retrieval_view.tree_view(tree)
    assert len(nodes) == 1 and [h.chunk_index for h in nodes[0].hits] == [1, 3] and nodes[0].rank == 1
    root = tree_html(nodes)
    node = root.find(".//li[@class='cl-node']")
    assert node.get("data-hits") == "2"
    assert [li.get("data-chunk-index") for li in node.findall("./ol[@class='cl-shared-hits']/li")] == ["1", "3"]
    parents = node.findall(".//ul[@data-role='parent']/li")
    assert len(parents) == 1  # shown once, not once per hit
    assert "shared by hits #1, #2" in "".join(node.find(".//div[@class='cl-group cl-group-parent']").itertext())
    marks = parents[0].findall(".//mark[@class='cl-hit-span']")
    assert [(m.get("data-rank"), m.get("data-start"), m.get("data-end")) for m in marks] == [
        ("1", "18", "41"),
        ("2", "62", str(len(TEXT))),
    ]
    assert ["".join(m.itertext()) for m in marks] == ["#1Fog horns warned ships.", "#2Radio came later."]
    # The parent's text reads whole, hits and all.
    assert "".join(parents[0].find("pre").itertext()).replace("#1", "").replace("#2", "") == TEXT


def test_hits_of_different_parents_stay_apart_in_score_order():
    second = item(PARENT, 42, len(TEXT), 1, role=common_pb2.CHUNK_ROLE_PARENT)
    first = item(PARENT, 0, 41, 0, role=common_pb2.CHUNK_ROLE_PARENT)
    tree = common_pb2.ExpansionTree(
        hits=[
            common_pb2.ExpansionNode(hit=item(HIT, *sentence(2), 2, rank=1), parent=second),
            common_pb2.ExpansionNode(hit=item(HIT, *sentence(0), 0, rank=2), parent=first),
            common_pb2.ExpansionNode(hit=item(HIT, *sentence(3), 3, rank=3), parent=second),
        ]
    )
    nodes = retrieval_view.tree_view(tree)
    assert [[h.chunk_index for h in n.hits] for n in nodes] == [[2, 3], [0]]
    lone = tree_html(nodes).findall(".//li[@class='cl-node']")[1]
    assert lone.find("./div[@data-role='hit']").get("data-chunk-index") == "0"
    mark = lone.find(".//ul[@data-role='parent']//mark[@class='cl-hit-span']")
    assert (mark.get("data-rank"), "".join(mark.itertext())) == ("2", "#2Lamps burned oil.")


def test_a_window_hit_is_marked_inside_its_window_and_a_reference_inside_the_hit():
    node = common_pb2.ExpansionNode(
        hit=item(HIT, *sentence(1), 1, rank=1, role=common_pb2.CHUNK_ROLE_SENTENCE),
        window=[
            item(WINDOW, *sentence(0), 0, role=common_pb2.CHUNK_ROLE_SENTENCE),
            item(WINDOW, *sentence(2), 2, role=common_pb2.CHUNK_ROLE_SENTENCE),
        ],
    )
    reference = Span("d", 28, 41)  # "warned ships."
    nodes = retrieval_view.tree_view(common_pb2.ExpansionTree(hits=[node]), references=[reference])
    window = tree_html(nodes).find(".//div[@class='cl-group cl-group-window-text']/pre")
    assert "".join(window.itertext()).replace("#1", "") == TEXT[:61]
    # The hit's stretches (cut where the excerpt starts) all carry its rank, the label once.
    hit = window.findall("mark[@class='cl-hit-span']")
    assert {m.get("data-rank") for m in hit} == {"1"}
    assert "".join("".join(m.itertext()) for m in hit) == "#1Fog horns warned ships."
    assert [m.find("mark[@class='cl-ref']").text for m in hit if m.find("mark") is not None] == ["warned ships."]
