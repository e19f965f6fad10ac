from kubesim.cli import main

raise SystemExit(main())
