"""BLEU-1 as Mem0's harness computes it. With the English Punkt tables present it must equal Mem0's own
calculate_bleu_scores (rewritten here from its published source as the reference: guard on falsy inputs,
str().strip(), lower(), nltk.word_tokenize, one reference, weights (1,0,0,0), method1, 0.0 on an nltk error);
without them the untrained Punkt fallback is labelled approximate. The tables here are small files the test
writes in the punkt_tab format (an abbreviation list), since the real ones are not reachable offline."""

import io
import warnings
import zipfile

import pytest

from memeval.scoring import f1 as f1_module
from memeval.scoring.f1 import B1_APPROXIMATE, B1_EXACT, bleu1, bleu1_mode

PAIRS = [
    ("He went to Paris. She stayed home.", "Paris"),
    ("Dr. Smith met her on 7 May 2023.", "7 May 2023"),
    ("Mr. and Mrs. Lee adopted a dog named Max", "a dog, Max"),
    ("  The answer is 3  ", 3),
    ("She said \"yes!\" Then left.", "yes"),
    ("It's a U.S. company, e.g. Acme.", "Acme"),
    ("", "anything"),
    ("something", ""),
    ("zero", 0),
    (" ", "x"),
]


def mem0_reference_bleu1(prediction, reference) -> float:
    import nltk
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    if not prediction or not reference:
        return 0.0
    prediction, reference = str(prediction).strip(), str(reference).strip()
    pred_tokens = nltk.word_tokenize(prediction.lower())
    ref_tokens = [nltk.word_tokenize(reference.lower())]
    try:
        return sentence_bleu(ref_tokens, pred_tokens, weights=(1, 0, 0, 0),
                             smoothing_function=SmoothingFunction().method1)
    except Exception:  # noqa: BLE001
        return 0.0


def _punkt_zip(abbreviations=("dr", "mr", "mrs", "e.g", "u.s")) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("punkt_tab/english/collocations.tab", "")
        archive.writestr("punkt_tab/english/sent_starters.txt", "she\nthen\n")
        archive.writestr("punkt_tab/english/abbrev_types.txt", "\n".join(abbreviations) + "\n")
        archive.writestr("punkt_tab/english/ortho_context.tab", "")
    return buffer.getvalue()


@pytest.fixture()
def no_tables(monkeypatch):
    monkeypatch.setattr(f1_module, "punkt_tables_present", lambda: False)


@pytest.fixture()
def tables(tmp_path, monkeypatch, cli):
    import hashlib

    import nltk

    archive = tmp_path / "punkt_tab.zip"
    archive.write_bytes(_punkt_zip())
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    cli("data", "fetch", "nltk", "--source", archive, "--sha256", digest, "--dest", tmp_path / "nltk", check=True)
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path / "nltk")])
    f1_module.punkt_tables_present.cache_clear()
    yield tmp_path / "nltk"
    f1_module.punkt_tables_present.cache_clear()


def test_the_issue_example_scores_as_in_mem0s_harness(no_tables):
    assert bleu1("He went to Paris. She stayed home.", "Paris") == pytest.approx(1 / 9)
    assert bleu1_mode() == B1_APPROXIMATE


def test_with_the_tables_b1_equals_mem0s_harness_on_every_pair(tables):
    assert bleu1_mode() == B1_EXACT
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for prediction, reference in PAIRS:
            assert bleu1(prediction, reference) == mem0_reference_bleu1(prediction, reference), (prediction,
                                                                                               reference)
    # the abbreviation list is what the tables add: 'dr.' stays one token, so the sentence is not split there
    assert f1_module.mem0_words("dr. smith met her.") == ["dr.", "smith", "met", "her", "."]


def test_without_tables_an_abbreviation_splits_and_the_mode_says_approximate(no_tables):
    assert f1_module.mem0_words("dr. smith met her.") != ["dr.", "smith", "met", "her", "."]


def test_fetching_the_tables_checks_the_hash_and_the_files_and_writes_nothing_otherwise(tmp_path, cli):
    archive = tmp_path / "punkt_tab.zip"
    archive.write_bytes(_punkt_zip())
    wrong = cli("data", "fetch", "nltk", "--source", archive, "--sha256", "0" * 64, "--dest", tmp_path / "out")
    assert wrong.returncode != 0 and "checksum mismatch" in wrong.stderr and not (tmp_path / "out").exists()
    missing = cli("data", "fetch", "nltk", "--source", archive, "--dest", tmp_path / "out")
    assert missing.returncode != 0 and "--sha256" in missing.stderr
    broken = tmp_path / "broken.zip"
    with zipfile.ZipFile(broken, "w") as z:
        z.writestr("punkt_tab/english/abbrev_types.txt", "dr\n")
    import hashlib

    result = cli("data", "fetch", "nltk", "--source", broken, "--sha256",
                 hashlib.sha256(broken.read_bytes()).hexdigest(), "--dest", tmp_path / "out")
    assert result.returncode != 0 and "missing collocations.tab" in result.stderr
    assert not (tmp_path / "out" / "tokenizers" / "punkt_tab" / "english").exists()
