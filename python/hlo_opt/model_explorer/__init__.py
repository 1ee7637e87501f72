"""A Model Explorer extension: an HLO module before and after hlo-opt's
passes, as two graphs of one collection.

    pip install ai-edge-model-explorer
    model-explorer model.hlo --extensions=hlo_opt.model_explorer

Model Explorer imports ``hlo_opt.model_explorer.main``, whose adapter
(:class:`HloOptAdapter`) reads ``.hlo``/``.txt`` (HLO text) and ``.pb``
(HloModuleProto, HloProto or HloSnapshot), runs the default pipeline and
returns the graph collection ``--emit-graph`` writes, built into Model
Explorer's own classes (:func:`to_graph_collection`)."""
