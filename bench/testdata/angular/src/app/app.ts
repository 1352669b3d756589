import { Component, signal } from '@angular/core';

@Component({
  selector: 'app-root',
  template: `<main><h1>Hello from Angular</h1><button (click)="count.set(count() + 1)">count is {{ count() }}</button></main>`,
})
export class App {
  protected readonly count = signal(0);
}
