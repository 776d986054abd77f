"""The framework-free core of task generation: config, mining, instructions, task files.

Nothing under this package imports Django. The ``generate`` management command, the pipeline-run
rows and ``report.json`` are thin adapters around these functions::

    from tasks_review.core.config import load_config
    from tasks_review.core.mining import find_repair_candidates
    from tasks_review.core.taskfiles import SourceTrace, write_task

    config = load_config(path)                       # GenerateConfig, or ConfigError
    candidates, drops = find_repair_candidates(replay, index, blobs, atif)
    for candidate in candidates:
        write_task(dest / candidate.key[:16], candidate, candidate.instruction, blobs,
                   source_trace=SourceTrace.for_candidate(file_sha256, candidate),
                   source_model=meta.model_name, base_image=image_with_digest)
"""
