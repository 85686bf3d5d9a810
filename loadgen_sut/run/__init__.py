"""The parts of ``inference-audit run`` (:func:`loadgen_sut.runner.run` puts them in order): the plan of a run and
the data set of each test (:mod:`.plan`), the checks before it (:mod:`.preflight`), one LoadGen test's process and
its deadline (:mod:`.child`), the steps after each test (:mod:`.steps`) and the verdict (:mod:`.verdict`)."""
