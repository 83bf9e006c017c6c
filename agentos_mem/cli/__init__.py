"""The ``agentos`` command line: one module per command group.

    common     what every group shares: settings from the flags, the workspace check, ``--json`` or text
               output, the Prefect stage plumbing, date arguments, CliError (one line, exit 2)
    admin      init, config, import, serve
    stages     digest, backfill, nightly, rebuild (the Prefect flows) and doctor
    facts      facts list / history / conflicts / resolve
    query      query, raw, mcp
    memory     memory save / update / show / list / delete / recall / proposals / extract / clear
    knowledge  collect, refine (the collect-to-inbox and inbox-refine flows)
    kb         kb pending / approve / reject / show / list / map / search / outline / read / ask
    bench      bench locomo / madial / beir / links / perf
    demo       demo (runs other commands through the ``main`` it is given)
    main       build_parser, main, entrypoint: the only module that imports the groups

Read commands (``query``, ``facts``, ``raw``, ``doctor``, ``config``, ``mcp``) read the stores directly and
never import Prefect, so they answer at once. Stage commands (``digest``, ``backfill``, ``nightly``,
``rebuild``) run the Prefect flows on
the server ``agentos serve`` runs, a configured ``PREFECT_API_URL``, or Prefect's ephemeral server.

A group module imports only ``cli.common`` and the layers below (never ``cli.main`` or another group), and
exposes ``COMMANDS`` and ``add_parser(sub, name)``; ``cli.main`` decides the order of ``agentos --help``.
Nothing outside this package imports it.
"""
