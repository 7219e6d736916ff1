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

    /// Starts the app's async calls for the requests the engine just sent. A call whose attempt
    /// the engine has already finished with is not made: sent on the way while the cache caught
    /// up with the clock, it timed out (and was perhaps retried) before the call could start.
    func startAsyncWork(_ origin: AsyncOrigin) {
        guard clock != nil else { return }
        let calls = origin.takeStarted()
        // The last call of each request in this batch: an earlier one is an attempt since retried.
        let restores = self.restores
        var last: [UInt64: Int] = [:]
        if calls.count > 1 { for (i, call) in calls.enumerated() { last[call.requestID] = i } }
        for (i, call) in calls.enumerated() {
            let id = call.requestID
            // The answer is for this attempt only: a late one, once a retry is sent, is not used.
            let attempt = engine.attempt(of: id)
            guard last[id] ?? i == i, engine.isInFlight(id, attempt: attempt) else { continue }
            let keys: [String], work: @Sendable () async throws -> [String: JSONValue]
            switch call {
            case .fetch(_, let requestKeys, let fetch):
                keys = requestKeys
                work = { try await fetch(requestKeys) }
            case .mutate(_, let request, let mutate):
                keys = request.keys
                work = { try await mutate(request) }
            case .http(_, let request, let send):
                Task(priority: Task.currentPriority) { [weak self] in
                    let result: Result<HTTPAnswer, OriginFailure>
                    do {
                        result = .success(try await send(request))
                    } catch is CancellationError {
                        result = .failure(OriginFailure("cancelled"))
                    } catch {
                        result = .failure(OriginFailure("\(error)"))
                    }
                    await self?.deliver(id, attempt: attempt, restores: restores,
                                        result.map { [.value($0.body?.entryValue ?? .null)] }, http: try? result.get())
                }
                continue
            }
            // Its timeout was scheduled as the engine sent it (`CacheEngine.armLiveTimeout`): an
            // answer that comes first replaces it; one that comes after it is not used.
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
                await self?.deliver(id, attempt: attempt, restores: restores, result)
            }
        }
    }

    /// Live mode: an answer arrived for attempt `attempt` of request `id`. It takes effect as the
    /// item (arrival time, the attempt's sequence number: its request id for the first), the
    /// place a simulated server answering after the same latency gives it, unless the attempt's
    /// timeout comes first. A replay runs that item before any call made at that time once its
    /// clock is there, and in (time, sequence) order among the items it runs. So while
    /// recording, when that order is already past (since the attempt was sent, the cache stepped
    /// to this millisecond and then served a call, or ran an item that comes after it), the
    /// answer takes effect at the next millisecond instead, and the replay keeps the recorded
    /// order. An answer to an attempt since retried is not used, nor one to a request sent
    /// before a restore (`restores`: the count the call started under).
    private func deliver(_ id: UInt64, attempt: Int, restores: UInt64, _ result: Result<[KeyAnswer], OriginFailure>,
                         http: HTTPAnswer? = nil) {
        guard let clock else { return }
        let arrival = max(clock.nowMs(), engine.now)
        let seq = engine.answerSeq(of: id)
        var time = arrival
        if recorder != nil && ((callMark.time == arrival && callMark.stepSeq >= seq)
                                || (engine.maxRunKey.time == arrival && engine.maxRunKey.seq > seq)) {
            time = arrival &+ 1
        }
        let used = restores == self.restores && engine.isInFlight(id, attempt: attempt)
            && engine.scheduleAnswer(id, result, at: time)
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
