"""What the UI, the reports and the command line show alike: view models of retrieved
chunks, verdicts and winners, number formats, and HTML rendered through Jinja2
templates with autoescape (the shared templates in views/templates/)."""
