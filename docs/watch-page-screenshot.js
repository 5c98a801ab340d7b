// Takes docs/watch-page.png: `node docs/watch-page-screenshot.js <operator link> [file]` against a running demo in
// which someone mentioned @greeter (npm start, then the README's walk-through). The link is the one warren prints at
// start (`watch page (operator link …): http://127.0.0.1:7070/?token=…`): without it the page shows only its
// sign-in form. Needs Chromium (apt-get install chromium).
import { chromium } from 'playwright-core';

const [url = 'http://127.0.0.1:7070/', file = 'docs/watch-page.png'] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--headless', '--no-sandbox'] });
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(url);
  await page.waitForTimeout(2000);
  // Open the newest thread's replies when the page shows them folded.
  const folded = page.getByText(/^\d+ repl(y|ies)$/).first();
  if (await folded.isVisible().catch(() => false)) await folded.click();
  await page.waitForTimeout(800);
  await page.screenshot({ path: file });
} finally {
  await browser.close();
}
