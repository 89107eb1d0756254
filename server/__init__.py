"""The MCP server: tools over the library, answers as pydantic records within a budget.

`roots` names the served roots and confines paths to them; `workspace` keeps them fresh
(the CLI's `--format agent` uses it too); `records` holds the tools' request and answer
records; `app` is the stdio server.

The public names are imported on first use (`dowse.lazy`): the CLI's `ask --format agent`
needs the workspace, not the MCP SDK that `serve` imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dowse.lazy import exports

if TYPE_CHECKING:
    from dowse.server.app import serve
    from dowse.server.roots import RootOptions, ServedRoot
    from dowse.server.workspace import Workspace, ask_for_agent, fresh_searcher

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
        **dict.fromkeys(["RootOptions", "ServedRoot"], "dowse.server.roots"),
        **dict.fromkeys(["Workspace", "ask_for_agent", "fresh_searcher"], "dowse.server.workspace"),
        "serve": "dowse.server.app",
    },
)
