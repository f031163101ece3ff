from sdk_server.app import main

main()
