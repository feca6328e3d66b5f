from dap_server.cli import main

main()
