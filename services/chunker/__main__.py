from services.chunker.server import main

main()
