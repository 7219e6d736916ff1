// Live mode (`Cache(fetch:mutate:clock:requestTimeout:)`): the engine follows the clock, the
// app's async calls start after each call, their answers take effect at their time, and a timer
// task wakes the cache at the next due item.

extension Cache {
    /// Live mode: brings the engine to the clock's time.
    @inline(__always)
    func sync() {
        // A flag, not the clock: reading the optional existential copies it, about 140
        // instructions per call in virtual mode.
        guard isLive else { return }
        syncLive()
    }

    private func syncLive() {
        guard let clock else { return }
        let target = clock.nowMs()
        if target > engine.now { step(to: target) }
    }

    /// Live mode: moves the engine to `target`, running what falls due (at `now`, what is due
    /// now). Each step counts as one command for the runaway limit (SPEC §7).
    func step(to target: Int64) {
        engine.beginUnitOfWork()
        try? engine.advance(by: max(0, target - engine.now))
        noteStep()
    }

    /// Starts the app's async calls for the requests the engine just sent, and schedules each
    /// one's timeout.
    func startAsyncWork(_ origin: AsyncOrigin) {
        guard clock != nil else { return }
        for call in origin.takeStarted() {
            let id: UInt64, keys: [String], work: @Sendable () async throws -> [String: JSONValue]
            switch call {
            case .fetch(let requestID, let requestKeys, let fetch):
                (id, keys) = (requestID, requestKeys)
                work = { try await fetch(requestKeys) }
            case .mutate(let requestID, let request, let mutate):
                (id, keys) = (requestID, request.keys)
                work = { try await mutate(request) }
            case .http(let requestID, let request, let send):
                engine.armTimeout(requestID, limit: engine.timeoutOfRequest(requestID) ?? requestTimeout)
                Task(priority: Task.currentPriority) { [weak self] in
                    let result: Result<HTTPAnswer, OriginFailure>
                    do {
                        result = .success(try await send(request))
                    } catch is CancellationError {
                        result = .failure(OriginFailure("cancelled"))
                    } catch {
                        result = .failure(OriginFailure("\(error)"))
                    }
                    await self?.deliver(requestID, result.map { [.value($0.body?.entryValue ?? .null)] }, http: try? result.get())
                }
                continue
            }
            // The timeout is the request's completion, scheduled now and replaced by its answer
            // if that comes first: it happens at its time whenever the cache next runs.
            engine.armTimeout(id, limit: engine.timeoutOfRequest(id) ?? requestTimeout)
            // The calls run at the priority of the app's task that sent the request (jobs on the
            // cache's queue would otherwise start them at the queue's own, possibly lower, priority).
            let priority = Task.currentPriority
            Task(priority: priority) { [weak self] in
                let result: Result<[KeyAnswer], OriginFailure>
                do {
                    let values = try await work()
                    result = .success(keys.map { values[$0].map(KeyAnswer.value) ?? .notFound })
                } catch is CancellationError {
                    result = .failure(OriginFailure("cancelled"))
                } catch {
                    result = .failure(OriginFailure("\(error)"))
                }
                await self?.deliver(id, result)
            }
        }
    }

    /// Live mode: an answer arrived. It takes effect as the item (arrival time, request id), the
    /// place a simulated server answering after the same latency gives it, unless the request's
    /// timeout comes first. A replay runs that item before any call made at that time once its
    /// clock is there, and in (time, id) order among the items it runs. So while recording, when
    /// that order is already past (since the request was sent, the cache stepped to this
    /// millisecond and then served a call, or ran an item that comes after it), the answer takes
    /// effect at the next millisecond instead, and the replay keeps the recorded order.
    private func deliver(_ id: UInt64, _ result: Result<[KeyAnswer], OriginFailure>, http: HTTPAnswer? = nil) {
        guard let clock else { return }
        let arrival = max(clock.nowMs(), engine.now)
        var time = arrival
        if recorder != nil && ((callMark.time == arrival && callMark.stepSeq >= id)
                                || (engine.maxRunKey.time == arrival && engine.maxRunKey.seq > id)) {
            time = arrival &+ 1
        }
        let used = engine.scheduleAnswer(id, result, at: time)
        if used, let http { engine.http.exchanges[id]?.answer = http }
        recorder?.append(.arrived(id: id, at: arrival, applied: used ? time : nil))
        step(to: arrival)
        finish()
    }

    /// Resumes the readers whose requests are gone without completing (a `restore` replaced them).
    func resumeFinishedReaders() {
        if !httpWaiting.isEmpty { resumeFinishedHTTPReads() }
        guard !waiting.isEmpty else { return }
        for id in waiting.keys.sorted() where !engine.isInFlight(id) {
            finishReads(waiting.removeValue(forKey: id)!, request: id)
        }
    }

    /// Live mode: makes sure a task wakes the cache at the next due time.
    func armTimer() {
        guard let clock, let due = engine.nextDueTime, due > engine.now || timerDue == nil else { return }
        if let armed = timerDue, armed <= due { return }
        timerDue = due
        Task(priority: Task.currentPriority) { [weak self] in
            try? await clock.sleep(untilMs: due)
            await self?.timerFired(due)
        }
    }

    private func timerFired(_ due: Int64) {
        if timerDue == due { timerDue = nil }
        sync()
        finish()
    }
}
