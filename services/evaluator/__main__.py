from services.evaluator.server import main

main()
