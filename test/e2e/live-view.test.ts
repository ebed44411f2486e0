/**
 * The live view and the report in a real browser (playwright-core driving the system's Chromium,
 * which `.ci/run` installs). During the seed-inflate scenario the live page must show the node
 * nodefleet launched with the five inflate pods on it, the NodeClaim's lifecycle, a chart that
 * has drawn data and, once the node is disrupted, the termination execution on its state graph
 * with its current state lit; after the run, `.nodefleet/report.html` must show the same from
 * disk with every network request refused (it is self-contained).
 *
 * Screenshots are kept in test-results/ (live-view.png, report.png).
 * A missing Chromium is a failure, not a skip.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { loadScenario } from '../../infra/local/scenario.ts';
import { runScenario } from '../../infra/local/runner.ts';
import type { LocalEnvironment } from '../../infra/local/environment.ts';

/** Where screenshots are kept (ignored by git; docs/live-view.png is a copy of one). */
const ArtifactsDir = resolve('test-results');
/** Browser names looked up on PATH, Debian's first. */
const ChromiumNames = ['chromium', 'chromium-browser', 'google-chrome-stable', 'google-chrome'];
/** Real ms the page may take to show something the scenario reaches (generous: a loaded 2-core machine runs it 3× slower). */
const UiWaitMs = 180_000;

/** The Chromium executable: $CHROMIUM_PATH or the first of {@link ChromiumNames} on PATH. */
function findChromium(): string | undefined {
  if (process.env.CHROMIUM_PATH) return existsSync(process.env.CHROMIUM_PATH) ? process.env.CHROMIUM_PATH : undefined;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    for (const name of ChromiumNames) if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/** Pixels of the chart's canvas that are not blank (uPlot draws lines, fills and axes on it). */
async function chartInk(page: Page): Promise<{ points: number; maxNodes: number; inked: number }> {
  return page.evaluate(() => {
    // Runs in the page (this project's TypeScript has no DOM types).
    const w = globalThis as any;
    const v = w.nodefleetView;
    const canvas = w.document.querySelector('#chart canvas');
    let inked = 0;
    if (canvas) {
      const d = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
      for (let i = 3; i < d.length; i += 4) if (d[i] > 0) inked++;
    }
    return { points: v?.chart?.data?.[0]?.length ?? 0, maxNodes: Math.max(0, ...(v?.chart?.data?.[1] ?? [])), inked };
  });
}

const workDir = mkdtempSync(join(tmpdir(), 'nodefleet-ui-'));
let browser: Browser | undefined;
afterAll(async () => {
  await browser?.close();
  rmSync(workDir, { recursive: true, force: true });
});

describe('live view and report', () => {
  it('shows the launched node, its pods, the chart and the termination graph, live and in the report', async () => {
    // Prepare
    const executablePath = findChromium();
    if (!executablePath) {
      throw new Error(
        `no Chromium found (looked for ${ChromiumNames.join(', ')} on PATH, or $CHROMIUM_PATH): install it with "apt-get install -y chromium" (.ci/run does)`,
      );
    }
    browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
    mkdirSync(ArtifactsDir, { recursive: true });
    const live = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    let liveChecks: Promise<void> | undefined;
    const liveSeen: Record<string, unknown> = {};

    // Act: the scenario, with the page opened as soon as the view serves
    const consoleLines: string[] = [];
    let env: LocalEnvironment | undefined;
    const result = await runScenario(loadScenario('seed-inflate'), {
      out: (l) => consoleLines.push(l),
      workDir,
      failFast: true,
      ui: { port: 0 },
      onStarted: (e) => (env = e),
      // The run can finish (and would close the view) before the page has seen the termination:
      // keep the view and the environment up until the live checks are done, pass or fail.
      keepUntil: async () => {
        await liveChecks?.catch(() => undefined);
      },
      onViewUrl: (url) => {
        liveChecks = (async () => {
          await live.goto(url);
          // The node nodefleet launched, with the five inflate pods running on it.
          const node = live.locator('.node.nodefleet[data-nodepool="default"]');
          await node.first().waitFor({ timeout: UiWaitMs });
          await live.waitForFunction(() => (globalThis as any).document.querySelectorAll('.node.nodefleet .pod.running:not(.ds)').length === 5, undefined, {
            timeout: UiWaitMs,
            polling: 200,
          });
          liveSeen.instanceType = await node.first().getAttribute('data-instance-type');
          liveSeen.nodeText = await node.first().innerText();
          liveSeen.claimState = await live.locator('#claims tr[data-claim]').first().getAttribute('data-state');
          liveSeen.chart = await chartInk(live);
          await live.screenshot({ path: join(ArtifactsDir, 'live-view.png'), fullPage: true });
          // Scaled to zero: the termination execution appears with a lit state.
          await live.locator('.execution[data-execution] .state.current').first().waitFor({ timeout: UiWaitMs });
          liveSeen.execution = await live.locator('.execution').first().getAttribute('data-current');
          liveSeen.graphStates = await live.locator('.execution').first().locator('[data-state]').count();
        })();
      },
    });
    await liveChecks;

    // Assess: the live page during the run
    expect(result.checks.filter((c) => !c.ok)).toEqual([]);
    expect(liveSeen.instanceType).toBe('c5a.2xlarge');
    // The price shown is what the EC2 stand-in charges for the instance (catalog price, EBS included).
    const launchedInstance = [...env!.ec2.instances.values()].find((i) => !i.preexisting)!;
    expect(launchedInstance.priceUsdPerHour).toBeGreaterThan(0.3);
    expect(liveSeen.nodeText).toMatch(/c5a\.2xlarge[\s\S]*on-demand[\s\S]*ap-northeast-2[abcd][\s\S]*NodePool default/);
    expect(liveSeen.nodeText).toContain(`$${launchedInstance.priceUsdPerHour!.toFixed(4)}/h`);
    expect(['Launched', 'Registered', 'Ready']).toContain(liveSeen.claimState);
    const liveChart = liveSeen.chart as Awaited<ReturnType<typeof chartInk>>;
    expect(liveChart.points).toBeGreaterThan(2);
    expect(liveChart.maxNodes).toBe(3);
    expect(liveChart.inked).toBeGreaterThan(1000);
    const states = Object.keys(JSON.parse(readFileSync('statemachines/termination.asl.json', 'utf8')).States);
    expect(states).toContain(liveSeen.execution);
    expect(liveSeen.graphStates).toBe(states.length);

    // Assess: the console was for people (no JSON, ≤ 100 columns, one status line per change); JSON went to logs.jsonl
    expect(consoleLines.filter((l) => l.trimStart().startsWith('{'))).toEqual([]);
    expect(consoleLines.filter((l) => [...l].length > 100)).toEqual([]);
    expect(consoleLines.some((l) => /^live view: http:\/\/127\.0\.0\.1:\d+\/$/.test(l))).toBe(true);
    expect(consoleLines.some((l) => /^ {2}t\+\d\d:\d\d provisioner +launched nodeclaim {2}NodeClaim=default-/.test(l))).toBe(true);
    const statuses = consoleLines.filter((l) => /^ {3}t\+\d\d:\d\d │ nodes \d/.test(l)).map((l) => l.slice(l.indexOf('│')));
    expect(statuses.length).toBeGreaterThan(3);
    expect(statuses.every((x, i) => i === 0 || x !== statuses[i - 1])).toBe(true);
    const jsonl = readFileSync(join(workDir, '.nodefleet', 'logs.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(jsonl.find((r) => r.message === 'launched nodeclaim')).toMatchObject({
      level: 'INFO',
      logger: 'controller',
      controller: 'provisioner',
      'instance-type': 'c5a.2xlarge',
    });

    // Assess: the report, from disk, with the network refused
    expect(result.reportPath).toBeDefined();
    const report = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    const requested: string[] = [];
    await report.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('file:')) return route.continue();
      requested.push(url);
      return route.abort();
    });
    await report.goto(pathToFileURL(result.reportPath!).href);
    await report.locator('#result.pass').waitFor({ timeout: 10_000 });
    expect(requested).toEqual([]);
    const launched = report.locator('#instances tr[data-managed="false"]');
    expect(await launched.count()).toBe(1);
    expect(await launched.getAttribute('data-instance-type')).toBe('c5a.2xlarge');
    expect(await report.locator('.node.managed .pod.running').count()).toBeGreaterThan(0);
    const reportChart = await chartInk(report);
    expect(reportChart.maxNodes).toBe(3);
    expect(reportChart.inked).toBeGreaterThan(1000);
    const exec = report.locator('.execution[data-status="SUCCEEDED"]');
    expect(await exec.count()).toBe(1);
    expect(await exec.locator('.state.current').getAttribute('data-state')).toBe('Terminated');
    expect(await exec.locator('.edge.taken').count()).toBeGreaterThan(5);
    expect(await report.locator('#timeline').innerText()).toMatch(/CreateFleet .*c5a\.2xlarge/);
    expect(await report.locator('#summary pre').innerText()).toContain('RESULT: PASS (seed-inflate)');
    await report.screenshot({ path: join(ArtifactsDir, 'report.png'), fullPage: true });
  }, 420_000);
});
