"""Evaluation of opinion highlights (OpinioRAG Secs. 4.1, 5, 6).

* :mod:`~opinio_agents.evaluation.aos` - AR/SF/OF verification metrics over AOS triplets.
* :mod:`~opinio_agents.evaluation.verify` - triplet extraction + scoring of highlights.
* :mod:`~opinio_agents.evaluation.rouge` - ROUGE equal to ``rouge_score``'s.
* :mod:`~opinio_agents.evaluation.reference` - ROUGE/BERTScore per side, TPR/TNR.
* :mod:`~opinio_agents.evaluation.judge` - LLM-as-a-judge (Fig. 2 criteria).
* :mod:`~opinio_agents.evaluation.ragas_adapter` - RAGAs baselines (``ragas`` extra).
* :mod:`~opinio_agents.evaluation.runner` - the evaluation run behind ``opinio evaluate``.
* :mod:`~opinio_agents.evaluation.side` - a highlight's side against human segment polarities.
* :mod:`~opinio_agents.evaluation.human` - scores against human-written summaries
  (``opinio evaluate --references``: aspect and general tasks, with baselines).

Nothing heavy is imported here; import the submodules you need.
"""

__all__: list[str] = []
