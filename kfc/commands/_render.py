"""How a failure is shown on the terminal, the same for kfc check and kfc replay."""

from __future__ import annotations

from typing import Any


def print_failure(console: Any, title: str, divergence: dict[str, Any] | None, summary: str | None,
                  repro: str | None) -> None:
    """One failure: what failed (literally), the divergence itself, one repro line."""
    console.print(f"FAIL {title}", style="red", markup=False, soft_wrap=True)
    if divergence:
        where = f"step {divergence['step']}" if divergence.get("step") is not None else "invariant"
        head = f"     {where} {divergence.get('op')}"
        if divergence.get("rule"):
            head += f"  rule {divergence['rule']}"
        console.print(head, markup=False, soft_wrap=True)
        if divergence.get("failure"):
            console.print(f"     target error: {divergence['failure']}", markup=False, soft_wrap=True)
        for d in divergence.get("diffs") or []:
            console.print(f"     {d['text']}", markup=False, soft_wrap=True)
    elif summary:
        console.print(f"     {summary}", markup=False, soft_wrap=True)
    if repro:  # one line, never wrapped: it is meant to be copied
        console.print(f"     repro: {repro}", soft_wrap=True, markup=False)
