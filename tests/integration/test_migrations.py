"""Schema migrations (chunklab/db/migrations.py, ADR 0067) on SQLite and a real
PostgreSQL: a fresh database upgrades to head and then equals the models; one
the previous release made with create_all (no version table) keeps its rows
and is stamped as the baseline; a later revision adds a column to an old
database; documents stored at ingest_0001 read with a parse report after the upgrade; a database newer than the code stops each service's start with a
message naming the revision; replicas starting together upgrade once."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from chunklab.db.migrations import Schema, SchemaTooNew, alembic_config, schema_of, upgrade_to_head
from chunklab.db.sessions import make_engine, make_sessionmaker
from chunklab.settings import Settings
from chunklab.v1 import documents_pb2, evaluator_pb2
from services.evaluator import server as evaluator_server
from services.evaluator.storage.repository import Repository
from services.evaluator.storage.tables import Base as EvaluatorBase
from services.ingest import server as ingest_server
from services.ingest.service import IngestService
from services.ingest.store import Base as IngestBase
from services.retriever import server as retriever_server
from services.retriever.store import Base as RetrieverBase
from services.retriever.store import RetrieverStore

REPO = Path(__file__).resolve().parents[2]
BASES = {"ingest": IngestBase, "evaluator": EvaluatorBase, "retriever": RetrieverBase}
# Each service's newest revision: the evaluator's second adds the experiment leases (ADR 0065),
# the ingest's second each document's parse report (ADR 0104).
HEADS = {"ingest": "ingest_0002", "evaluator": "evaluator_0003", "retriever": "retriever_0001"}
WHEN = datetime(2026, 5, 4, 9, 30, tzinfo=UTC)


def script_of(base) -> ScriptDirectory:
    return ScriptDirectory.from_config(alembic_config(schema_of(base)))


def baseline_tables(base) -> sa.MetaData:
    """The tables as the previous release's create_all made them (frozen in the baseline)."""
    script = script_of(base)
    return script.get_revision(script.get_base()).module.BASELINE


def versions(url: str, name: str) -> list[str]:
    with sa.create_engine(url).connect() as connection:
        return list(connection.scalars(sa.text(f"SELECT version_num FROM alembic_version_{name}")))


def stamp(url: str, name: str, revision: str) -> None:
    with sa.create_engine(url).begin() as connection:
        connection.execute(sa.text(f"UPDATE alembic_version_{name} SET version_num = :r"), {"r": revision})


def only(base):
    """Alembic's include_object for the tables of one service."""
    return lambda item, _name, kind, _reflected, _other: (
        (item if kind == "table" else item.table).name in (base.metadata.tables)
    )


def test_a_fresh_database_upgrades_to_head_and_then_equals_every_services_models(empty_database_url):
    # All three services in one database: each keeps its own version table.
    for base in BASES.values():
        make_sessionmaker(empty_database_url, base)
    engine = make_engine(empty_database_url)
    for name, base in BASES.items():
        assert versions(empty_database_url, name) == [script_of(base).get_current_head()]
        with engine.connect() as connection:
            # The other services' tables are in the database, not in these models: not differences.
            context = MigrationContext.configure(connection, opts={"include_object": only(base)})
            assert compare_metadata(context, base.metadata) == []


def previous_release(url: str, leave_out: tuple[str, ...] = ()) -> sa.Engine:
    """A database as the release before migrations left it: every service's
    tables by create_all (those in `leave_out` not yet), no version table."""
    engine = sa.create_engine(url)
    for base in BASES.values():
        tables = baseline_tables(base)
        tables.create_all(engine, tables=[t for n, t in tables.tables.items() if n not in leave_out])
    return engine


def test_a_previous_release_database_keeps_its_rows_and_is_stamped_as_the_baseline(empty_database_url):
    # An even older evaluator had no provenance table: the baseline creates just that one.
    engine = previous_release(empty_database_url, leave_out=("question_set_provenance",))
    tree = documents_pb2.DocumentTree(root=documents_pb2.TreeNode(kind=documents_pb2.NODE_KIND_DOCUMENT, end_char=5))
    question = evaluator_pb2.Question(question_id="q-1", text="Which river?")
    with engine.begin() as connection:
        tables = {
            **baseline_tables(IngestBase).tables,
            **baseline_tables(EvaluatorBase).tables,
            **baseline_tables(RetrieverBase).tables,
        }
        connection.execute(
            sa.insert(tables["documents"]).values(
                document_id="d-1",
                name="notes.md",
                format=documents_pb2.DOCUMENT_FORMAT_MARKDOWN,
                collection="news",
                language="en",
                published_at=WHEN,
                ingested_at=WHEN,
                size_bytes=5,
                content_hash="h" * 64,
                character_count=5,
                extra={"encoding": "utf-8"},
                text="Hello",
                tree=tree.SerializeToString(),
            )
        )
        connection.execute(
            sa.insert(tables["question_sets"]).values(
                question_set_id="s-1",
                name="rivers",
                description="",
                content_hash="c",
                question_count=1,
                created_at=WHEN,
            )
        )
        connection.execute(
            sa.insert(tables["questions"]).values(
                question_id="q-1", question_set_id="s-1", position=0, message=question.SerializeToString()
            )
        )
        connection.execute(
            sa.insert(tables["retriever_freshness_windows"]).values(collection="news", max_age_days=7, updated_at=WHEN)
        )

    ingest = IngestService(make_sessionmaker(empty_database_url, IngestBase), 1_000_000, lambda _id: 0)
    repository = Repository(make_sessionmaker(empty_database_url, EvaluatorBase))
    store = RetrieverStore(empty_database_url)

    for name, base in BASES.items():
        assert versions(empty_database_url, name) == [script_of(base).get_current_head()]
    document = ingest.get("d-1", documents_pb2.DOCUMENT_VIEW_FULL)
    assert (document.name, document.text, dict(document.metadata), document.tree) == (
        "notes.md",
        "Hello",
        {"encoding": "utf-8"},
        tree,
    )
    assert document.published_at.ToDatetime(tzinfo=UTC) == WHEN
    stored = repository.get_question_set("s-1")
    assert [q.text for q in stored.questions] == ["Which river?"] and stored.name == "rivers"
    assert store.freshness_windows() == {"news": 7}
    assert "question_set_provenance" in sa.inspect(engine).get_table_names()


NOTE_REVISION = '''"""A test-only revision: documents gain a note.

Revision ID: ingest_test_0002
Revises: {head}
"""

import sqlalchemy as sa
from alembic import op

revision = "ingest_test_0002"
down_revision = "{head}"


def upgrade() -> None:
    op.add_column("documents", sa.Column("note", sa.String(64), nullable=False, server_default="none"))
'''


def test_a_later_revision_adds_a_column_to_an_old_database_and_the_older_code_then_refuses_it(
    empty_database_url, tmp_path
):
    old = IngestService(make_sessionmaker(empty_database_url, IngestBase), 1_000_000, lambda _id: 0)
    document, _ = old.create("a.md", documents_pb2.DOCUMENT_FORMAT_UNSPECIFIED, "", "", WHEN, 0, [b"Some text."])
    # The next release's migrations: today's revisions and one more.
    folder = tmp_path / "migrations"
    shutil.copytree(schema_of(IngestBase).folder, folder, ignore=shutil.ignore_patterns("__pycache__"))
    head = script_of(IngestBase).get_current_head()
    (folder / "versions" / "ingest_test_0002_note.py").write_text(NOTE_REVISION.format(head=head))
    newer = Schema("ingest", folder, IngestBase.metadata)

    upgrade_to_head(make_engine(empty_database_url), newer)
    upgrade_to_head(make_engine(empty_database_url), newer)  # at head already: nothing to do

    assert versions(empty_database_url, "ingest") == ["ingest_test_0002"]
    with sa.create_engine(empty_database_url).connect() as connection:
        rows = connection.execute(sa.text("SELECT document_id, name, note FROM documents")).all()
    assert [tuple(r) for r in rows] == [(document.document_id, "a.md", "none")]
    with pytest.raises(SchemaTooNew, match="at schema revision 'ingest_test_0002'"):
        make_sessionmaker(empty_database_url, IngestBase)


def newer_than_the_code(url: str) -> None:
    for name, base in BASES.items():
        make_sessionmaker(url, base)
        stamp(url, name, f"{name}_0099")


def test_a_database_newer_than_the_code_stops_every_services_start_and_is_left_as_it_was(empty_database_url, tmp_path):
    newer_than_the_code(empty_database_url)
    settings = Settings(database_url=empty_database_url, data_dir=tmp_path)
    shown = sa.make_url(empty_database_url).render_as_string(hide_password=True)
    for name, start in (
        ("ingest", ingest_server.build_service),
        ("evaluator", evaluator_server.build_service),
        ("retriever", retriever_server.build),
    ):
        with pytest.raises(SchemaTooNew) as refused:
            start(settings)
        assert str(refused.value) == (
            f"chunklab {name}: the database {shown} is at schema revision '{name}_0099' (alembic_version_{name}), "
            f"which this ChunkLab does not know (the newest it knows is '{HEADS[name]}'): a newer ChunkLab "
            "upgraded it. Upgrade ChunkLab to that release or later to use this database (or point "
            "CHUNKLAB_DATABASE_URL at another one); nothing in it was changed"
        )
        assert versions(empty_database_url, name) == [f"{name}_0099"]


def test_the_ingest_process_exits_non_zero_naming_the_unknown_revision(postgres, tmp_path):
    url = postgres.database("newer_ingest")
    newer_than_the_code(url)
    environment = {
        **os.environ,
        "CHUNKLAB_DATABASE_URL": url,
        "CHUNKLAB_DATA_DIR": str(tmp_path),
        "CHUNKLAB_INGEST_ADDRESS": "127.0.0.1:0",
        "CHUNKLAB_RETRIEVER_ADDRESS": "127.0.0.1:1",
    }
    done = subprocess.run(
        [sys.executable, "-m", "services.ingest"],
        cwd=REPO,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .startswith("chunklab ingest: the database postgresql+psycopg://chunklab@127.0.0.1:")
    )
    assert "is at schema revision 'ingest_0099'" in done.stderr and "Upgrade ChunkLab" in done.stderr
    assert "Traceback" not in done.stderr


def test_replicas_starting_together_upgrade_once(empty_database_url):
    url = empty_database_url
    errors: list[BaseException] = []

    def start() -> None:
        try:
            make_sessionmaker(url, EvaluatorBase)
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert versions(url, "evaluator") == [HEADS["evaluator"]]


def test_documents_stored_before_parse_reports_read_with_one_after_the_upgrade(empty_database_url, tmp_path):
    # The release before reports: the ingest revisions up to ingest_0001 only.
    folder = tmp_path / "migrations"
    shutil.copytree(schema_of(IngestBase).folder, folder, ignore=shutil.ignore_patterns("__pycache__", "ingest_0002_*"))
    upgrade_to_head(make_engine(empty_database_url), Schema("ingest", folder, IngestBase.metadata))
    assert versions(empty_database_url, "ingest") == ["ingest_0001"]
    pb = documents_pb2
    # A two-page PDF's tree: a section with its heading, a paragraph, a table, a two-item list.
    section = pb.TreeNode(kind=pb.NODE_KIND_SECTION, level=1, title="Results", start_char=0, end_char=40)
    section.children.add(kind=pb.NODE_KIND_HEADING, level=1, title="Results", start_char=0, end_char=9)
    section.children.add(kind=pb.NODE_KIND_PARAGRAPH, start_char=11, end_char=20)
    section.children.add(kind=pb.NODE_KIND_TABLE, start_char=22, end_char=30)
    listed = section.children.add(kind=pb.NODE_KIND_LIST, start_char=32, end_char=40)
    listed.children.add(kind=pb.NODE_KIND_LIST_ITEM, start_char=32, end_char=35)
    listed.children.add(kind=pb.NODE_KIND_LIST_ITEM, start_char=37, end_char=40)
    tree = pb.DocumentTree(root=pb.TreeNode(kind=pb.NODE_KIND_DOCUMENT, end_char=40, children=[section]))
    tree.page_starts.extend([0, 22])
    with sa.create_engine(empty_database_url).begin() as connection:
        connection.execute(
            sa.insert(baseline_tables(IngestBase).tables["documents"]).values(
                document_id="d-1",
                name="report.pdf",
                format=pb.DOCUMENT_FORMAT_PDF,
                collection="default",
                language="en",
                published_at=WHEN,
                ingested_at=WHEN,
                size_bytes=40,
                content_hash="h" * 64,
                character_count=40,
                extra={"pages": "2", "tables_not_read": "p. 2 (the table finder could not parse the page)"},
                text="x" * 40,
                tree=tree.SerializeToString(),
            )
        )

    ingest = IngestService(make_sessionmaker(empty_database_url, IngestBase), 1_000_000, lambda _id: 0)

    assert versions(empty_database_url, "ingest") == ["ingest_0002"]
    listed_documents, _, _ = ingest.list(10, "", "", "")
    for document in (ingest.get("d-1", pb.DOCUMENT_VIEW_BASIC), listed_documents[0]):
        report = document.parse_report
        assert (report.pages, report.headings, report.paragraphs, report.tables, report.list_items) == (2, 1, 1, 1, 2)
        assert list(report.warnings) == [
            "The tables on 1 page could not be read as tables (p. 2 (the table finder could not parse the page)): "
            "their text is kept as paragraphs, without the table's rows and columns"
        ]
        assert report.reader == "PDFium (text) and pdfplumber (tables)"
        # The note became the warning: the metadata no longer carries it.
        assert dict(document.metadata) == {"pages": "2"}
    assert ingest.get("d-1", pb.DOCUMENT_VIEW_FULL).tree == tree
