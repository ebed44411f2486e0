/**
 * The demo's picture: a {@link ViewRecorder} sampling the environment, optionally the live view
 * server on 127.0.0.1, and the self-contained report written after the run
 * (`.nodefleet/report.html`, {@link ReportFileName}).
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LocalEnvironment } from '../environment.ts';
import type { TimelineEntry } from '../summary.ts';
import { reportPage } from './page.ts';
import { startViewServer, DefaultViewPort, type ViewServer } from './server.ts';
import { ViewRecorder, type ViewSnapshot } from './snapshot.ts';

/** The report's file name inside the state folder. */
export const ReportFileName = 'report.html';

export { DefaultViewPort } from './server.ts';
export type { ViewSnapshot } from './snapshot.ts';

export interface LiveViewOptions {
  /** Serve the live page (default false: only record, for the report). */
  serve?: boolean;
  /** Port to ask for (default {@link DefaultViewPort}, falling back to any free port; 0 = any). */
  port?: number;
}

export class LiveView {
  readonly recorder: ViewRecorder;
  /** The live page's URL when serving. */
  url?: string;
  private server?: ViewServer;
  /** Set once the run has ended: the live page then shows the result and the summary too. */
  private result?: { ok: boolean; summary: string };

  private constructor(
    private readonly env: LocalEnvironment,
    timeline: readonly TimelineEntry[],
  ) {
    this.recorder = new ViewRecorder(env, timeline);
  }

  /** Starts recording (and serving) a started environment. The previous run's report is removed. */
  static async start(env: LocalEnvironment, timeline: readonly TimelineEntry[], opts: LiveViewOptions = {}): Promise<LiveView> {
    rmSync(join(env.stateDir, ReportFileName), { force: true });
    const view = new LiveView(env, timeline);
    view.recorder.sample();
    if (opts.serve) {
      view.server = await startViewServer({ snapshot: () => view.snapshot(), port: opts.port ?? DefaultViewPort, fallback: opts.port === undefined });
      view.url = view.server.url;
    }
    return view;
  }

  /** The live picture now. */
  async snapshot(): Promise<ViewSnapshot> {
    this.recorder.sample();
    return this.recorder.snapshot(await this.env.nodeClaims(), 'live', this.result);
  }

  /** Writes the report (final picture + summary); returns its path. */
  async writeReport(result: { ok: boolean; summary: string }): Promise<string> {
    this.recorder.sample();
    this.result = result;
    const snap = this.recorder.snapshot(await this.env.nodeClaims(), 'report', result);
    const path = join(this.env.stateDir, ReportFileName);
    writeFileSync(path, reportPage(snap));
    return path;
  }

  async close(): Promise<void> {
    await this.server?.close();
    this.server = undefined;
  }
}
