"""AgentOS Memory: a self-hosted memory and knowledge system for AI agents, Chinese and English first-class.

One import name for the whole project; the layers are its subpackages (``agentos_mem.query`` reads, ``agentos_mem.flows``
runs the nightly, ...). The read path an agent host uses::

    from agentos_mem.query.ask import ask
    answer = ask("我的服务器配置是什么？", user="default")

The folders the design map names at the repository's top (``flows/``, ``tasks/``, ``storage/``, ``deployments/``,
``bench/``) are subpackages of this one too, mapped there by ``pyproject.toml``'s ``package-dir``.
"""

__version__ = "0.1.0"
