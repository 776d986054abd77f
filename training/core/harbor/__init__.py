"""Harbor's runner on our kept tasks: an offline environment, its jobs folders, re-grading.

    harbor run -p TASK_DIR -a oracle -o JOBS_DIR \\
        --env training.core.harbor.environment:OfflineDockerEnvironment
"""
