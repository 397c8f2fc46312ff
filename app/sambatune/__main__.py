from sambatune.cli.main import main

raise SystemExit(main())
