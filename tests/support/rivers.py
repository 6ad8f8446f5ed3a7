"""The rivers experiment: a document, its questions and an experiment whose answers the
fake OpenAI server gives, run until its third answer (for the kill-and-resume tests)."""

from __future__ import annotations

import time

from chunklab.client import ChunkLab
from chunklab.rpc import channels
from chunklab.v1 import common_pb2, evaluator_pb2
from tests.support.fake_openai import FakeOpenAI

DOCUMENT = "\n\n".join(
    f"Paragraph {i}. The {name} river flows through the valley of {place}. Its water feeds the {crop} fields."
    for i, (name, place, crop) in enumerate(
        [
            ("Amber", "Lorn", "barley"),
            ("Birch", "Mossa", "rice"),
            ("Cobalt", "Venn", "wheat"),
            ("Dune", "Ostra", "maize"),
            ("Ember", "Quill", "oat"),
        ]
    )
)


QUESTIONS = [
    "Which river flows through Lorn?",
    "What does the Birch river feed?",
    "Where does the Cobalt river flow?",
    "What grows by the Dune river?",
    "Which valley does the Ember river cross?",
]


def asked(call: dict) -> str:
    return call["body"]["messages"][-1]["content"].rsplit("Question: ", 1)[-1]


def rivers_experiment(address: str, fake: FakeOpenAI, document_id: str, name: str) -> evaluator_pb2.ExperimentConfig:
    """The rivers questions as a set on the evaluator at address, and an experiment over them
    (fixed_size 16/0) whose answers come from `fake`, the third one hanging until its evaluator dies."""
    fake.responder = lambda messages, model: f"Answer to: {asked({'body': {'messages': messages}})}"
    fake.script = ["good", "good", "slow"]
    fake.delay_s = 120
    question_set = channels.evaluator(address).CreateQuestionSet(
        evaluator_pb2.CreateQuestionSetRequest(
            name="rivers", questions=[evaluator_pb2.Question(text=q) for q in QUESTIONS]
        ),
        timeout=30,
    )
    return evaluator_pb2.ExperimentConfig(
        name=name,
        question_set_id=question_set.question_set_id,
        strategies=[
            evaluator_pb2.StrategyGrid(
                strategy="fixed_size",
                grid=[
                    evaluator_pb2.KnobGrid(knob="chunk_size", values=[common_pb2.KnobValue(int_value=16)]),
                    evaluator_pb2.KnobGrid(knob="chunk_overlap", values=[common_pb2.KnobValue(int_value=0)]),
                ],
            )
        ],
        retrieval=common_pb2.RetrievalOptions(top_k=2, filter=common_pb2.RetrievalFilter(document_ids=[document_id])),
        answer_model=evaluator_pb2.ModelEndpoint(base_url=fake.base_url, model="fake-model"),
        judge_model=evaluator_pb2.ModelEndpoint(model="none"),
    )


def run_until_the_third_answer(lab: ChunkLab, config: evaluator_pb2.ExperimentConfig, fake: FakeOpenAI):
    """Starts the experiment and returns (its stream, its id) once two questions are done
    and the third answer is being written."""
    stream = lab.run_experiment(config)
    experiment_id = ""
    for event in stream:
        if event.HasField("progress"):
            experiment_id = event.progress.experiment_id
            if event.progress.questions_done == 2:
                break
    deadline = time.monotonic() + 60
    while len(fake.calls) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    return stream, experiment_id
