"""Custom gates written in Python.

A gate is a function ``gate(call, phase)``: ``call`` is a dict with
``tool_name``, ``input``, ``cwd``, ``changed_files`` and, after the tool ran,
``output`` and ``is_error``; ``phase`` is ``"pre"`` (a failure blocks the
call) or ``"post"`` (a failure marks it failed). It returns ``True`` or
``None`` (pass), ``False`` (fail) or ``(passed, message)``. An exception is a
failed gate whose message names it, never a crash. Name the gate in a
:class:`~tascer.ToolValidationConfig`'s ``pre_gates``/``post_gates``.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Tuple, Union

GateResult = Union[bool, None, Tuple[bool, str]]
GateFunction = Callable[[Dict[str, Any], str], GateResult]

_REGISTRY: Dict[str, GateFunction] = {}


def register_gate(name: str) -> Callable[[GateFunction], GateFunction]:
    """Registers the decorated function as the gate ``name``.

    >>> @register_gate("no_rm")
    ... def no_rm(call, phase):
    ...     return "rm " not in call["input"].get("command", ""), "rm is not allowed"
    """
    if not name or not isinstance(name, str):
        raise ValueError("a gate needs a non-empty name")

    def decorate(function: GateFunction) -> GateFunction:
        if not callable(function):
            raise TypeError(f"gate {name!r} must be callable")
        _REGISTRY[name] = function
        return function

    return decorate


def unregister_gate(name: str) -> None:
    """Removes the gate ``name`` (no error when it is not registered)."""
    _REGISTRY.pop(name, None)


def registered_gates() -> List[Tuple[str, GateFunction]]:
    """Every registered gate, as ``(name, function)`` pairs."""
    return sorted(_REGISTRY.items())
