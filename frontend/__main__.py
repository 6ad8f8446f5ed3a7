"""`python -m frontend` starts the UI (the stack launcher runs exactly this)."""

from frontend.app import main

if __name__ == "__main__":
    main()
