# SPDX-License-Identifier: Apache-2.0
"""Enum values in Python: a member of the enum everywhere; where a string is also read (the
neighbours of dpselect.plot's pricing pictures) one rule spells it: the member's name in any case
with '-' or '_' between its words, or the dpselect command's word, the spellings read before
included; anything else is a ValueError naming the parameter and the members."""

import numpy as np
import pytest

import dpselect
from dpselect._checks import enum_member

ADD, CHANGE = dpselect.BidderNeighbours.ADD_OR_REMOVE_BIDDER, dpselect.BidderNeighbours.CHANGE_ONE_BID
COMMAND_WORDS = {"add-remove": ADD, "change-bid": CHANGE}
SPELLINGS = [
    (ADD, ADD), ("add_or_remove_bidder", ADD), ("ADD_OR_REMOVE_BIDDER", ADD), ("add-or-remove-bidder", ADD),
    ("add-remove", ADD), ("add_remove", ADD), ("Add-Remove", ADD),
    (CHANGE, CHANGE), ("change_one_bid", CHANGE), ("CHANGE_ONE_BID", CHANGE), ("change-one-bid", CHANGE),
    ("change-bid", CHANGE), ("change_bid", CHANGE),
]


@pytest.mark.parametrize("value,member", SPELLINGS)
def test_a_member_and_every_spelling_of_it_read_as_the_member(value, member):
    assert enum_member(dpselect.BidderNeighbours, value, "neighbours", COMMAND_WORDS) is member


@pytest.mark.parametrize("value", ["someone", "add", "change one bid", "", 1, None, dpselect.Mechanism.EXPONENTIAL])
def test_anything_else_is_refused_naming_the_parameter_and_the_members(value):
    with pytest.raises(ValueError) as refused:
        enum_member(dpselect.BidderNeighbours, value, "neighbours", COMMAND_WORDS)
    assert str(refused.value) == f"neighbours must be ADD_OR_REMOVE_BIDDER or CHANGE_ONE_BID (got {value!r})"


def test_three_or_more_members_are_listed_with_commas():
    with pytest.raises(ValueError, match=r"^strategy must be TRUNCATED_GEOMETRIC, LAPLACE_THRESHOLD, .* or DP_SIPS "
                                         r"\(got 'geometric'\)$"):
        enum_member(dpselect.PartitionStrategy, "geometric", "strategy", {})


@pytest.mark.parametrize("value,member", SPELLINGS)
def test_the_pricing_picture_reads_every_spelling(value, member):
    plot = pytest.importorskip("dpselect.plot")
    bids, prices = [1.0, 3.0, 3.0, 7.0], np.array([1.0, 3.0, 7.0])
    assert np.array_equal(plot.pricing_probabilities(bids, prices, 0.7, value)[2],
                          plot.pricing_probabilities(bids, prices, 0.7, member)[2])
    default = plot.pricing_probabilities(bids, prices, 0.7)[2]
    assert np.array_equal(plot.pricing_probabilities(bids, prices, 0.7, value)[2], default) == (member is ADD)
