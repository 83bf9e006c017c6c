"""The MCP server (``agentos mcp``): a transport over the read path (``query``) and the memory records
(``storage.memory_records``), like the CLI. It sits above query because some of its tools write (saving,
updating and deleting a memory record, counting a recall), and the read path never writes."""
