"""The MCP server: tools over the library, answers as pydantic records within a budget.

`workspace` keeps served roots fresh and confined (the CLI's `--format agent` uses it
too); `records` holds the tools' request and answer records; `app` is the stdio server.

The public names are imported on first use (`dowse.lazy`): the CLI's `ask --format agent`
needs the workspace, not the MCP SDK that `serve` imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dowse.lazy import exports

if TYPE_CHECKING:
    from dowse.server.app import serve
    from dowse.server.workspace import (
        RootOptions,
        ServedRoot,
        Workspace,
        ask_for_agent,
        fresh_searcher,
    )

__all__ = [
    "RootOptions",
    "ServedRoot",
    "Workspace",
    "ask_for_agent",
    "fresh_searcher",
    "serve",
]

exports(
    __name__,
    {
        **dict.fromkeys(
            ["RootOptions", "ServedRoot", "Workspace", "ask_for_agent", "fresh_searcher"],
            "dowse.server.workspace",
        ),
        "serve": "dowse.server.app",
    },
)
