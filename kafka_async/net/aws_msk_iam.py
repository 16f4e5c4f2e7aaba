"""SASL aws_msk_iam: being written (issue 24); its settings join net/settings.py's SCHEMA."""

from __future__ import annotations

from ..settings.spec import Setting

#: Settings this module adds to the client schema (see net/settings.py).
SETTINGS: list[Setting] = []
