"""The planner's dependency-free version helpers agree with `packaging` (PEP 440) on numeric versions."""

from __future__ import annotations

import itertools

import pytest
from packaging.specifiers import SpecifierSet

from provisioner.versions import at_least, driver_at_least, in_series, major, ort_matcher, vtuple

SPECS = [
    "~=13.0",
    "~=9.0",
    ">=9,<10",
    "==12.*",
    "!=1.20.*",
    "~=1.19.0",
    ">1.18",
    "<=1.20.1",
    "==1.20",
    "==1.20.0",
    ">=1.18,<1.21",
    "!=1.19.2",
    "<13",
    ">=10.2",
    ">13.0",
    "<=13.0",
    "==9.1.0.70",
    ">1.20",
    "<=1.20",
    "!=1.20",
]
VERSIONS = [
    "13.0.96",
    "13.1.80",
    "12.9.1",
    "9.14.0.64",
    "10.0",
    "1.20.0",
    "1.20.1",
    "1.19.2",
    "1.18.0",
    "1.21.0",
    "14.0",
    "9",
    "1.19",
    "1.19.9",
    "10.2.0.post1",
    "1.20.0rc1",
    "9.1.0.70.post1",
    "13.0.post2",
    "1.20.post1",
]


@pytest.mark.parametrize("spec", SPECS)
def test_specifiers_match_packaging(spec: str) -> None:
    matcher = ort_matcher(spec)
    for version in VERSIONS:
        assert matcher(version) == SpecifierSet(spec).contains(version, prereleases=True), (spec, version)


def test_plain_series_and_release() -> None:
    assert ort_matcher("1.20")("1.20.1") and not ort_matcher("1.20")("1.21.0")
    assert ort_matcher("1.20.1")("1.20.1") and not ort_matcher("1.20.1")("1.20.0")


@pytest.mark.parametrize("bad", ["1.2x", "", ">=", "1.20; rm -rf /", "~=1"])
def test_malformed_specifiers(bad: str) -> None:
    with pytest.raises(ValueError):
        ort_matcher(bad)


def test_dotted_number_comparison() -> None:
    values = ["535.104.05", "535.104", "580", "525.60.13", "2.34", "2.31", "580.0"]
    for a, b in itertools.product(values, repeat=2):
        assert at_least(a, b) == ((vtuple(a) + (0, 0, 0))[:3] >= (vtuple(b) + (0, 0, 0))[:3]), (a, b)
    assert at_least("535.104", "525.60.13") and not at_least("470.82.01", "525.60.13")
    assert at_least("580", "580.0.0") and not at_least("580", "580.65.06")
    assert vtuple("535.104.05") == (535, 104, 5)


def test_a_bare_major_names_its_series() -> None:
    assert ort_matcher("1")("1.20.1") and ort_matcher("1")("1.31.0") and not ort_matcher("1")("2.0.0")
    assert ort_matcher("1.2")("1.2.0") and not ort_matcher("1.2")("1.20.0")


def test_series_and_driver_branches() -> None:
    assert in_series("12.4.1", 12) and in_series("12.4.1", "12.4") and not in_series("12.4", "12.8")
    assert driver_at_least("580", "580.65.06") and not at_least("580", "580.65.06")  # `--driver 580`: the branch
    assert not driver_at_least("575", "580.0") and driver_at_least("580.82.07", "580.65.06")
    assert major("13.0") == 13 and major(12) == 12 and vtuple("3.13t") == (3, 13)
