"""Result files of peer benchmarking tools (GuideLLM, AIPerf, GenAI-Perf, ``vllm bench serve``): read into typed
runs (:mod:`.model`, :mod:`.parse`) and the ``PEER-*`` rules a claim built on them must meet (:mod:`.rules`)."""
