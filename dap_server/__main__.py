"""`python -m dap_server` is `ndb`."""

from dap_server.cli import main

main()
