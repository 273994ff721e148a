"""Oracles the tests run against: other implementations of what Qiao computes."""
