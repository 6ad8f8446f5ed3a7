from services.ingest.server import main

main()
