"""The MCP server: tools over the library, answers as pydantic records within a budget.

`workspace` keeps served roots fresh and confined (the CLI's `--format agent` uses it
too); `records` holds the tools' request and answer records; `app` is the stdio server.
"""
