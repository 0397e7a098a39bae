"""`coordkit record` and `coordkit reproduce --replay`: a recorded LLM run replays to the same figure data."""

import json

from coordkit.cli import main


def test_a_stand_in_recording_replays_to_identical_figure_data(tmp_path, capsys):
    recording = tmp_path / "fig1.jsonl"
    assert (
        main(
            [
                "record",
                "rep-beer-fig1",
                "--seeds",
                "1",
                "--stand-in",
                "--out",
                str(recording),
                "--figures-out",
                str(tmp_path / "recorded"),
            ]
        )
        == 0
    )
    assert "recorded 316 calls" in capsys.readouterr().out
    header = json.loads(recording.read_text().splitlines()[0])
    assert "NOT an LLM" in header["note"] and header["command"].startswith("coordkit record rep-beer-fig1")
    assert (
        main(
            [
                "reproduce",
                "rep-beer-fig1",
                "--seeds",
                "1",
                "--replay",
                str(recording),
                "--out",
                str(tmp_path / "replayed"),
            ]
        )
        == 0
    )
    assert "316" in capsys.readouterr().out
    recorded = (tmp_path / "recorded" / "rep-beer-fig1.csv").read_text()
    assert recorded == (tmp_path / "replayed" / "rep-beer-fig1.csv").read_text() and "llm_calls" in recorded


def test_record_without_a_key_says_how_to_get_one(monkeypatch, tmp_path, capsys):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert main(["record", "rep-beer-fig1", "--out", str(tmp_path / "x.jsonl")]) == 2
    assert "ANTHROPIC_API_KEY is not set" in capsys.readouterr().err


def test_a_missing_recording_is_a_clear_error(tmp_path, capsys):
    assert main(["reproduce", "rep-beer-fig1", "--replay", str(tmp_path / "nope.jsonl")]) == 2
    assert "coordkit record" in capsys.readouterr().err


def test_record_refuses_a_nan_budget_before_any_call_or_file(tmp_path, capsys):
    recording = tmp_path / "nan.jsonl"
    arguments = ["record", "rep-beer-fig1", "--stand-in", "--seeds", "1", "--budget-usd", "nan"]
    assert main([*arguments, "--out", str(recording), "--figures-out", str(tmp_path)]) == 2
    assert "budget_usd=nan is not a budget" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())
