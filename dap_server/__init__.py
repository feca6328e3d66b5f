"""Neural Debug's debug adapter (DAP over stdio/TCP) and terminal debugger. See docs/dap.md."""
