from services.retriever.server import main

main()
