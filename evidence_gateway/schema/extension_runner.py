"""The extensions' lifecycle hooks (operation, parsing, validation, execution) entered and left as
Strawberry's own runner does, without its per-request scaffolding.

Strawberry builds, for each phase of each request, a context manager that asks every extension
whether it overrides the hook, inspects the hook's kind, wraps it with ``contextlib`` (one
``functools.update_wrapper`` per hook) and enters them through an ``AsyncExitStack``: about a
tenth of a GraphQL list's CPU with the schema's nine extensions (bench/layers.py,
docs/performance.md). A hook is a function of the extension's class, so what to call is worked
out once per function here; per request only the hooks that exist are entered, in the same
order, and left in the reverse order. Whenever an exception is involved (the phase's body
raised, or a hook's exit did) the remaining exits run through ``contextlib``'s exit stack, so
what propagates or is suppressed is what Strawberry's runner gives. Stream results
(``on_stream_result``) keep Strawberry's runner.
"""

from __future__ import annotations

import contextlib
import inspect
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from functools import partial
from types import TracebackType
from typing import Any

from strawberry.extensions import SchemaExtension
from strawberry.extensions.runner import SchemaExtensionsRunner

# A context manager per request: given the extension, entered with (a)enter, left with (a)exit.
Factory = Callable[[SchemaExtension], Any]


@dataclass(frozen=True, slots=True)
class _Hook:
    factory: Factory
    is_async: bool


@contextlib.asynccontextmanager
async def _awaited(func: Callable[[SchemaExtension], Any], extension: SchemaExtension) -> AsyncIterator[None]:
    await func(extension)
    yield


@contextlib.contextmanager
def _called(func: Callable[[SchemaExtension], Any], extension: SchemaExtension) -> Iterator[None]:
    func(extension)
    yield


_HOOKS: dict[Any, _Hook] = {}


def _hook(func: Any, name: str, extension: SchemaExtension) -> _Hook:
    """What Strawberry's ``ExtensionContextManagerBase.get_hook`` makes of ``func``, once per function."""
    held = _HOOKS.get(func)
    if held is not None:
        return held
    if inspect.isgeneratorfunction(func):
        hook = _Hook(contextlib.contextmanager(func), is_async=False)
    elif inspect.isasyncgenfunction(func):
        hook = _Hook(contextlib.asynccontextmanager(func), is_async=True)
    elif callable(func):
        is_async = inspect.iscoroutinefunction(func)
        hook = _Hook(partial(_awaited if is_async else _called, func), is_async=is_async)
    else:
        raise ValueError(f"Hook {name} on {extension} must be callable, received {func!r}")
    _HOOKS[func] = hook
    return hook


def _phase_hooks(extensions: list[SchemaExtension], name: str) -> tuple[tuple[int, _Hook], ...]:
    """Which extensions (by position) override the phase's hook, and their hooks."""
    default = getattr(SchemaExtension, name)
    hooks = []
    for i, extension in enumerate(extensions):
        func = getattr(type(extension), name)
        if func is not default:
            hooks.append((i, _hook(func, name, extension)))
    return tuple(hooks)


# (phase, the extensions' classes in order) -> _phase_hooks: the same for every request.
_PHASES: dict[tuple[Any, ...], tuple[tuple[int, _Hook], ...]] = {}


class _Phase:
    """One phase's hooks, entered in the extensions' order and left in the reverse order."""

    __slots__ = ("entered", "hooks", "name")

    def __init__(self, extensions: list[SchemaExtension], name: str) -> None:
        self.name = name
        kinds = (name, *map(type, extensions))
        found = _PHASES.get(kinds)
        if found is None:
            found = _PHASES[kinds] = _phase_hooks(extensions, name)
        self.hooks = [(extensions[i], hook) for i, hook in found]
        self.entered: list[tuple[Any, bool]] = []

    def __enter__(self) -> None:
        entered = self.entered
        for extension, hook in self.hooks:
            if hook.is_async:
                raise RuntimeError(f"SchemaExtension hook {extension}.{self.name} failed to complete synchronously.")
            manager = hook.factory(extension)
            type(manager).__enter__(manager)
            entered.append((manager, False))

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool:
        entered = self.entered
        if exc_type is None:
            while entered:
                manager, _is_async = entered.pop()
                try:
                    type(manager).__exit__(manager, None, None, None)
                except BaseException:  # the rest as contextlib leaves them, with this exception
                    if not self._stack().__exit__(*sys.exc_info()):
                        raise
                    return False
            return False
        return bool(self._stack().__exit__(exc_type, exc, tb))

    async def __aenter__(self) -> None:
        entered = self.entered
        for extension, hook in self.hooks:
            manager = hook.factory(extension)
            if hook.is_async:
                await type(manager).__aenter__(manager)
            else:
                type(manager).__enter__(manager)
            entered.append((manager, hook.is_async))

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool:
        entered = self.entered
        if exc_type is None:
            while entered:
                manager, is_async = entered.pop()
                try:
                    if is_async:
                        await type(manager).__aexit__(manager, None, None, None)
                    else:
                        type(manager).__exit__(manager, None, None, None)
                except BaseException:  # the rest as contextlib leaves them, with this exception
                    if not await self._async_stack().__aexit__(*sys.exc_info()):
                        raise
                    return False
            return False
        return bool(await self._async_stack().__aexit__(exc_type, exc, tb))

    def _stack(self) -> contextlib.ExitStack:
        """The hooks not left yet, on an exit stack (which leaves them in the reverse order)."""
        stack = contextlib.ExitStack()
        for manager, _is_async in self.entered:
            stack.push(manager)
        self.entered = []
        return stack

    def _async_stack(self) -> contextlib.AsyncExitStack:
        stack = contextlib.AsyncExitStack()
        for manager, is_async in self.entered:
            if is_async:
                stack.push_async_exit(manager)
            else:
                stack.push(manager)
        self.entered = []
        return stack


class LeanExtensionsRunner(SchemaExtensionsRunner):
    """Strawberry's runner with the four request phases entered as ``_Phase`` does."""

    def operation(self) -> Any:
        return _Phase(self.extensions, "on_operation")

    def validation(self) -> Any:
        return _Phase(self.extensions, "on_validate")

    def parsing(self) -> Any:
        return _Phase(self.extensions, "on_parse")

    def executing(self) -> Any:
        return _Phase(self.extensions, "on_execute")
