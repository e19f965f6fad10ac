"""The reconcile engine: controller-runtime's guarantees for operators run by Celery.

Processes
- `manage.py runwatcher` (opsboard.engine.watcher): lists and watches the registered
  controllers' kinds while it holds the `opsboard-watcher` Lease (leader.py), keeps the
  mirror (opsboard.mirror.writer) and queues keys (mapping.py decides which).
- `celery -A opsboard worker` (tasks.py → runner.reconcile_key): runs reconciles; each
  worker's main process also pumps retries/requeues and recovers keys of dead workers
  (pump.py).
- `celery -A opsboard beat`: the resync (tasks.resync), every OPSBOARD_RESYNC_SECONDS.

For the rest of opsboard
- `enqueue.reconcile_enqueue(key=Key(...), trigger="manual")`: "Reconcile now".
- `selectors.engine_health()`: live workers and queue depths; the mirror's selectors
  (opsboard.mirror.selectors) answer everything about cluster objects.
- `views.metrics_view` at /metrics: controller-runtime's metric names, all processes.
- `signals.reconcile_run_recorded`: sent after each run is stored (the audit links
  patches to the run that observed them); the engine itself imports no other app.
- The queue's semantics and Redis layout are described in queue.py.
"""
